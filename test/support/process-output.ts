import { METHOD_TABLE, notificationSchemasOf } from '@fs-sandbox/policy';
import type { ServeProcess } from '../fixtures/conformance/serve-process.js';

/** process/start's notifications with the schemas the method table declares for them. */
const NOTIFICATION_SCHEMAS = notificationSchemasOf(METHOD_TABLE);

export interface FinishedProcess {
  stdout: string;
  stderr: string;
  /** A terminal's one stream (`tty: true`). */
  pty: string;
  exitCode: number;
  notifications: Array<{ method: string; params: Record<string, unknown> }>;
}

/**
 * The notifications a served process sent (from line `from` of the server's output) until its
 * `process/closed`, each checked against its schema in the method table (a mismatch throws).
 */
export async function processFinished(
  serve: ServeProcess,
  processId: string,
  from = 0,
  timeoutMs = 20_000,
): Promise<FinishedProcess> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const notifications = serve.rawLines
      .slice(from)
      .map((line) => JSON.parse(line) as { method?: string; params?: Record<string, unknown> })
      .filter((message) => message.method !== undefined && message.params?.processId === processId)
      .map((message) => {
        const method = message.method as string;
        const schema = NOTIFICATION_SCHEMAS.get(method);
        if (schema === undefined) throw new Error(`${method} is not a notification of process/start`);
        const parsed = schema().safeParse(message.params);
        if (!parsed.success) throw new Error(`${method} does not match its schema: ${parsed.error.message}`);
        return { method, params: message.params as Record<string, unknown> };
      });
    if (notifications.some((n) => n.method === 'process/closed')) {
      const text = (stream: string) =>
        notifications
          .filter((n) => n.method === 'process/output' && n.params.stream === stream)
          .map((n) => Buffer.from(n.params.chunk as string, 'base64').toString())
          .join('');
      const exited = notifications.find((n) => n.method === 'process/exited');
      return {
        stdout: text('stdout'),
        stderr: text('stderr'),
        pty: text('pty'),
        exitCode: exited?.params.exitCode as number,
        notifications,
      };
    }
    if (Date.now() > deadline) throw new Error(`process ${processId} did not close: ${serve.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
