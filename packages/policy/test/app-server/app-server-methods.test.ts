import { describe, expect, it } from 'vitest';
import {
  APP_SERVER_METHODS,
  type AppOperationMethod,
  appDescriptorOf,
  operationParamsOf,
  parseAppParams,
} from '../../src/app-server/app-server-methods.js';
import { parseParams } from '../../src/schemas/method-schemas.js';

/** One V2 request of each file method, as a client writes it (native absolute paths). */
const REQUESTS: Record<AppOperationMethod, Record<string, unknown>> = {
  'fs/readFile': { path: '/w/a.txt' },
  'fs/writeFile': { path: '/w/a.txt', dataBase64: 'aGk=' },
  'fs/createDirectory': { path: '/w/d', recursive: false },
  'fs/getMetadata': { path: '/w/a.txt' },
  'fs/readDirectory': { path: '/w' },
  'fs/remove': { path: '/w/d', force: false },
  'fs/copy': { sourcePath: '/w/a.txt', destinationPath: '/w/b.txt', recursive: true },
};

describe('a V2 file method as its exec-server operation', () => {
  it('covers every method that names an operation', () => {
    const withOperation = APP_SERVER_METHODS.filter((method) => appDescriptorOf(method).operation);
    expect(withOperation.sort()).toEqual(Object.keys(REQUESTS).sort());
  });

  it.each(Object.entries(REQUESTS))(
    '%s: path fields become URIs, the rest parse as the operation’s',
    (name, raw) => {
      const method = name as AppOperationMethod;
      const converted = operationParamsOf(method, parseAppParams(method, raw), 'linux') as Record<
        string,
        unknown
      >;
      const descriptor = appDescriptorOf(method);
      for (const field of Object.keys(descriptor.paths))
        expect(converted[field]).toBe(`file://${raw[field]}`);
      // The exec-server's params are strict: a V2 field it does not know would be refused here.
      const operation = descriptor.operation?.method as AppOperationMethod;
      expect(() => parseParams(operation, { ...converted, sandbox: null })).not.toThrow();
    },
  );
});
