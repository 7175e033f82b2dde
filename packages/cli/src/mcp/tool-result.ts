import { type ErrorKind, isFsError } from '@fs-sandbox/policy';

/** What a tool handler returns: text for the model and the same text as structured content. */
export interface TextToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: { content: string; errorKind?: ErrorKind };
  isError?: true;
}

export function textResult(text: string): TextToolResult {
  return { content: [{ type: 'text', text }], structuredContent: { content: text } };
}

/** A refusal or failure as an `isError` result whose text starts with the error kind. */
export function errorResult(error: unknown): TextToolResult {
  const kind: ErrorKind = isFsError(error) ? error.kind : 'internal_error';
  const message = error instanceof Error ? error.message : String(error);
  return errorText(kind, message);
}

export function errorText(kind: ErrorKind, message: string): TextToolResult {
  const text = `${kind}: ${message}`;
  return {
    content: [{ type: 'text', text }],
    structuredContent: { content: text, errorKind: kind },
    isError: true,
  };
}
