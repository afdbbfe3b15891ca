// The MCP conformance suite's fixture tools (`@modelcontextprotocol/conformance`, server scenarios),
// each answering what its scenario checks with the texts of the suite's reference server. Served as
// `test_<tool>` by a bermd started with `--tool-separator _`.
import { content, elicit, log, progress, sample } from '@berm/guest';

/** A 1×1 red PNG. */
const IMAGE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
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
