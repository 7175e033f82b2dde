import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A model provider for the real Codex client, offline: an HTTP server speaking just enough of the
 * Responses API (`POST …/responses`, answered as a server-sent event stream) to end every turn with
 * one assistant message. It keeps each request's body, so a test can see what the client sent the
 * model (its instructions, the AGENTS.md files it found).
 */
export class MockModel {
  readonly requests: string[] = [];
  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<MockModel> {
    let model: MockModel | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        model?.requests.push(Buffer.concat(chunks).toString());
        if (request.method !== 'POST' || !request.url?.endsWith('/responses')) {
          response.writeHead(404).end();
          return;
        }
        const event = (data: Record<string, unknown>) =>
          `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(event({ type: 'response.created', response: { id: 'resp-1' } }));
        response.write(
          event({
            type: 'response.output_item.done',
            item: {
              type: 'message',
              role: 'assistant',
              id: 'msg-1',
              content: [{ type: 'output_text', text: 'done' }],
            },
          }),
        );
        response.end(
          event({
            type: 'response.completed',
            response: { id: 'resp-1', usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    model = new MockModel(server, `http://127.0.0.1:${port}/v1`);
    return model;
  }

  /** The `codex -c` overrides that make this server the model provider. */
  codexConfig(): string[] {
    return [
      '-c',
      'model_provider=mock',
      '-c',
      'model_providers.mock.name=mock',
      '-c',
      `model_providers.mock.base_url="${this.baseUrl}"`,
      '-c',
      'model_providers.mock.wire_api=responses',
      '-m',
      'mock-model',
    ];
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
