import { FsError } from '@fs-sandbox/policy';

/** All of stdin as text, refusing (not truncating) more than `maxBytes`. */
export async function readBoundedStdin(stdin: NodeJS.ReadableStream, maxBytes: number): Promise<string> {
  return (await readBoundedStdinBytes(stdin, maxBytes)).toString('utf8');
}

export async function readBoundedStdinBytes(stdin: NodeJS.ReadableStream, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer);
    size += buffer.byteLength;
    if (size > maxBytes) throw new FsError('invalid_request', `stdin holds more than ${maxBytes} bytes`);
    chunks.push(new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength));
  }
  return Buffer.concat(chunks, size);
}
