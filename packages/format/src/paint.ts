/**
 * The few styles the formatters use. Formatters take a `Paint` instead of importing chalk, so
 * they stay pure (tests pass `plain`) and chalk is loaded only by output that is coloured.
 */
export interface Paint {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  cyan(text: string): string;
}

const same = (text: string): string => text;

export const plain: Paint = { bold: same, dim: same, red: same, yellow: same, green: same, cyan: same };
