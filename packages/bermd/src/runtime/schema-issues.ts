/**
 * How a schema violation reads, shared by the main thread (tool arguments) and the workers (nested
 * call arguments, event fields), so a refusal says the same thing wherever it was found.
 */

/** A validator compiled by ajv, as both threads call it: a predicate that leaves its first issue in `errors`. */
export type Check = ((data: unknown) => boolean) & { errors?: SchemaIssue[] | null };

/** The part of an ajv error object the messages use. */
export interface SchemaIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * `subject` names what was validated (`argument`, `field`). Issues about a missing or unexpected
 * member point at that member, so the path names the thing to fix rather than its parent.
 */
export function describeIssue(subject: string, issue: SchemaIssue): { path: string; message: string } {
  const member = issue.params.missingProperty ?? issue.params.additionalProperty ?? issue.params.unevaluatedProperty;
  if (typeof member === 'string') {
    const path = `${issue.instancePath}/${escapePointer(member)}`;
    const what = issue.keyword === 'required' ? 'is required' : 'is not allowed';
    return { path, message: `${subject} ${path} ${what}` };
  }
  const text = issue.message ?? `fails ${issue.keyword}`;
  if (issue.instancePath === '') return { path: '', message: `${subject}s ${text}` };
  return { path: issue.instancePath, message: `${subject} ${issue.instancePath} ${text}` };
}

/** Runs `check` on `data`; undefined when it passes, else the first issue described. */
export function violation(check: Check, subject: string, data: unknown): { path: string; message: string } | undefined {
  if (check(data)) return undefined;
  const issue = check.errors?.[0];
  if (issue === undefined) return { path: '', message: `${subject}s do not match the schema` };
  return describeIssue(subject, issue);
}
