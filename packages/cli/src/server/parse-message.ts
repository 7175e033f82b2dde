import { FsError } from '@fs-sandbox/policy';
import type { IncomingMessage, RequestId } from './rpc-messages.js';
import { UNPARSABLE_ID } from './rpc-messages.js';

export type TransportLabel = 'stdio' | 'websocket';

export type ParseOutcome =
  | { ok: true; message: IncomingMessage }
  | { ok: false; id: RequestId; error: FsError };

/** Longest method name or snippet quoted back in an error, so hostile input is never echoed in bulk. */
const MAX_QUOTED_CHARS = 128;

export function quoteBounded(text: string): string {
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
}

function unparsable(transport: TransportLabel, detail: string, id: RequestId = UNPARSABLE_ID): ParseOutcome {
  const message = `failed to parse JSON-RPC message from fs-sandbox ${transport}: ${quoteBounded(detail)}`;
  return { ok: false, id, error: new FsError('invalid_request', message) };
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

/**
 * Turns one framed message into a request or a notification. Anything else (bad JSON, batches,
 * responses, wrong member types) becomes an invalid_request error: the reference answers these with
 * id -1, and we do too, except that a well-formed id is echoed so the client can match the reply.
 */
export function parseMessage(raw: Buffer | string, transport: TransportLabel): ParseOutcome {
  let value: unknown;
  try {
    value = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch (error) {
    return unparsable(transport, error instanceof Error ? error.message : String(error));
  }
  if (Array.isArray(value)) return unparsable(transport, 'batch requests are not supported');
  if (value === null || typeof value !== 'object') return unparsable(transport, 'expected a JSON object');

  const record = value as Record<string, unknown>;
  const hasId = Object.hasOwn(record, 'id');
  if (hasId && !isRequestId(record.id)) return unparsable(transport, 'id must be a string or an integer');
  const id = hasId ? (record.id as RequestId) : UNPARSABLE_ID;
  const method = record.method;
  if (typeof method !== 'string') {
    const isResponse = Object.hasOwn(record, 'result') || Object.hasOwn(record, 'error');
    return unparsable(
      transport,
      isResponse ? 'unexpected response: this server sends no requests' : 'missing field `method`',
      id,
    );
  }
  if (!hasId) return { ok: true, message: { kind: 'notification', method, params: record.params } };
  return { ok: true, message: { kind: 'request', id: id, method, params: record.params } };
}
