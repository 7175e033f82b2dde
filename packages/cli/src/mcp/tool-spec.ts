import type { FsMethod } from '@fs-sandbox/broker/internal';
import type { ParamsIn, ResultOf } from '@fs-sandbox/policy';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { AllowedDirectories } from './allowed-directories.js';
import type { TextToolResult } from './tool-result.js';

/** The allowed directories a call sees, and the broker bound to their sandbox. */
export interface McpScope {
  directories: AllowedDirectories;
  call<M extends FsMethod>(method: M, params: Omit<ParamsIn<M>, 'sandbox'>): Promise<ResultOf<M>>;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  idempotentHint?: boolean;
  destructiveHint?: boolean;
  openWorldHint: false;
}

/** A tool result: text (or media) content with its structured twin. */
export type ToolResult = TextToolResult | CallToolResult;

export interface ToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  inputSchema: Shape;
  /** Default: `{ content: string }` plus the error kind of an `isError` result. */
  outputSchema?: z.ZodRawShape;
  annotations: ToolAnnotations;
  run(args: z.infer<z.ZodObject<Shape>>, scope: McpScope): Promise<ToolResult>;
}

/** Keeps each tool's argument type while the table holds them all. */
export function defineTool<Shape extends z.ZodRawShape>(spec: ToolSpec<Shape>): ToolSpec {
  return spec as unknown as ToolSpec;
}

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
