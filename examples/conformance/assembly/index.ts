// The MCP conformance suite's fixtures (`@modelcontextprotocol/conformance`, server scenarios): tools,
// prompts and resources, each answering what its scenario checks with the texts of the suite's reference
// server. Served as `test_<tool>` and `test_<prompt>`, its resources at `test://<path>`, by a bermd
// started with `--tool-separator _ --resource-uris harness-scheme`.
import { content, elicit, log, Messages, progress, resourceUpdated, sample } from '@berm/guest';

/** A 1×1 red PNG. */
const IMAGE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
/** IMAGE's bytes, which the binary resource answers (and the guest library sends as Base64). */
const IMAGE_BYTES: StaticArray<u8> = [137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 31, 21, 196, 137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 218, 99, 252, 207, 192, 240, 31, 0, 5, 5, 2, 0, 95, 200, 241, 210, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130];
/** A WAV file with one sample. */
const AUDIO = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

/**
 * Tests simple text content response
 * @content text
 */
export function simple_text(): void {
  content.text('This is a simple text response for testing.');
}

/**
 * Tests image content response
 * @content image
 */
export function image_content(): void {
  content.image(IMAGE, 'image/png');
}

/**
 * Tests audio content response
 * @content audio
 */
export function audio_content(): void {
  content.audio(AUDIO, 'audio/wav');
}

/**
 * Tests embedded resource content response
 * @content resource
 */
export function embedded_resource(): void {
  content.resource('test://embedded-resource', 'text/plain', 'This is an embedded resource content.');
}

/**
 * Tests response with multiple content types (text, image, resource)
 * @content text,image,resource
 */
export function multiple_content_types(): void {
  content
    .text('Multiple content types test:')
    .image(IMAGE, 'image/png')
    .resource('test://mixed-content-resource', 'application/json', '{"test":"data","value":123}');
}

/**
 * Tests tool that emits log messages during execution
 * @content text
 */
export function tool_with_logging(): void {
  log('Tool execution started');
  log('Tool processing data');
  log('Tool execution completed');
  content.text('Tool with logging executed successfully');
}

/**
 * Tests error response handling
 * @content text
 */
export function error_handling(): void {
  throw new Error('This tool intentionally returns an error for testing');
}

/**
 * Tests tool that reports progress notifications
 * @content text
 */
export function tool_with_progress(): void {
  for (let step = 0; step <= 100; step += 50) {
    progress(<f64>step, 100, 'Completed step ' + step.toString() + ' of 100');
  }
  content.text('Progress completed');
}

/** What `sampling` takes. */
@json
class SamplingArgs {
  /** The prompt to send to the client's model. */
  prompt!: string;
}

/** A text block of the model's answer. */
@json
class SampledText {
  type: string = '';
  text: string = '';
}

/** The part of a CreateMessageResult this tool reads. */
@json
class Sampled {
  content: SampledText = new SampledText();
}

/**
 * Tests server-initiated sampling (LLM completion request)
 * @content text
 */
export function sampling(args: SamplingArgs): void {
  const params = '{"messages":[{"role":"user","content":{"type":"text","text":' + JSON.stringify<string>(args.prompt) + '}}],"maxTokens":100}';
  const answer = sample(params);
  if (!answer.ok) throw new Error('Sampling not supported or error: ' + answer.message);
  content.text('LLM response: ' + answer.value<Sampled>().content.text);
}

/** What `elicitation` takes. */
@json
class ElicitationArgs {
  /** The message to show the user. */
  message!: string;
}

/** Asks `message` with `schema` and answers what the user said, as the reference server words it. */
function askAndTell(message: string, schema: string, prefix: string): void {
  const answer = elicit(message, schema);
  if (!answer.ok) throw new Error('Elicitation not supported or error: ' + answer.message);
  const said = answer.contentJson.length > 0 ? answer.contentJson : '{}';
  content.text(prefix + 'action=' + answer.action + ', content=' + said);
}

/**
 * Tests server-initiated elicitation (user input request)
 * @content text
 */
export function elicitation(args: ElicitationArgs): void {
  askAndTell(
    args.message,
    '{"type":"object","properties":{"username":{"type":"string","description":"User\'s response"},"email":{"type":"string","description":"User\'s email address"}},"required":["username","email"]}',
    'User response: ',
  );
}

/**
 * Tests elicitation with default values per SEP-1034
 * @content text
 */
export function elicitation_sep1034_defaults(): void {
  askAndTell(
    'Please review and update the form fields with defaults',
    '{"type":"object","properties":{' +
      '"name":{"type":"string","description":"User name","default":"John Doe"},' +
      '"age":{"type":"integer","description":"User age","default":30},' +
      '"score":{"type":"number","description":"User score","default":95.5},' +
      '"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},' +
      '"verified":{"type":"boolean","description":"Verification status","default":true}' +
      '},"required":[]}',
    'Elicitation completed: ',
  );
}

/**
 * Tests elicitation with enum schema improvements per SEP-1330
 * @content text
 */
export function elicitation_sep1330_enums(): void {
  askAndTell(
    'Please select options from the enum fields',
    '{"type":"object","properties":{' +
      '"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},' +
      '"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[' +
      '{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},' +
      '"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],' +
      '"enumNames":["Option One","Option Two","Option Three"]},' +
      '"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,' +
      '"items":{"type":"string","enum":["option1","option2","option3"]}},' +
      '"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[' +
      '{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}' +
      '},"required":[]}',
    'Elicitation completed: ',
  );
}

/**
 * A static text resource for testing
 * @resource static-text
 * @mime text/plain
 */
export function static_text(): string {
  return 'This is the content of the static text resource.';
}

/**
 * A static binary resource (image) for testing
 * @resource static-binary
 * @mime image/png
 */
export function static_binary(): Uint8Array {
  const bytes = new Uint8Array(IMAGE_BYTES.length);
  for (let i = 0; i < IMAGE_BYTES.length; i++) bytes[i] = IMAGE_BYTES[i];
  return bytes;
}

/**
 * A resource a subscriber is told of when it changes
 * @resource watched-resource
 * @mime text/plain
 */
export function watched_resource(): string {
  return 'Watched resource content';
}

/**
 * Tells the clients subscribed to the watched resource that it changed (the suite subscribes and
 * unsubscribes only; this shows the notification a subscriber receives)
 */
export function touch_watched(): bool {
  return resourceUpdated('watched-resource');
}

@json
class TemplateVariables {
  id: string = '';
}

/**
 * A resource template with parameter substitution
 * @template template/{id}/data
 * @mime application/json
 */
export function template(vars: TemplateVariables): string {
  return '{"id":' + JSON.stringify<string>(vars.id) + ',"templateTest":true,"data":' + JSON.stringify<string>('Data for ID: ' + vars.id) + '}';
}

/**
 * A simple prompt without arguments
 * @prompt
 */
export function simple_prompt(): string {
  return 'This is a simple prompt for testing.';
}

@json
class PromptArguments {
  /** First test argument */
  arg1: string = '';
  /** Second test argument */
  arg2: string = '';
}

/**
 * A prompt with required arguments
 * @prompt
 */
export function prompt_with_arguments(args: PromptArguments): string {
  return 'Prompt with arguments: arg1=\'' + args.arg1 + '\', arg2=\'' + args.arg2 + '\'';
}

const ARG1_VALUES = ['paris', 'park', 'party'];

/**
 * The values of prompt_with_arguments' arg1 that begin with what was typed.
 * @complete prompt_with_arguments arg1
 */
export function complete_arg1(value: string): string[] {
  const values = new Array<string>();
  for (let i = 0; i < ARG1_VALUES.length; i++) if (ARG1_VALUES[i].startsWith(value)) values.push(ARG1_VALUES[i]);
  return values;
}

@json
class EmbeddedResourceArguments {
  /** URI of the resource to embed */
  resourceUri: string = '';
}

/**
 * A prompt that includes an embedded resource
 * @prompt
 */
export function prompt_with_embedded_resource(args: EmbeddedResourceArguments): Messages {
  return new Messages()
    .resource(args.resourceUri, 'text/plain', 'Embedded resource content for testing.')
    .text('Please process the embedded resource above.');
}

/**
 * A prompt that includes image content
 * @prompt
 */
export function prompt_with_image(): Messages {
  return new Messages().image(IMAGE, 'image/png').text('Please analyze the image above.');
}
