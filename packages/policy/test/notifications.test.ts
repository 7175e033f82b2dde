import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  APP_SERVER_METHOD_TABLE,
  type AppNotification,
  type ExecServerNotification,
  METHOD_TABLE,
  notificationSchemasOf,
} from '../src/index.js';

/**
 * The notifications each method sends are declared on it in its table, with their schemas: the
 * server's senders are typed from them (`ExecServerNotification`, `AppNotification`) and clients
 * parse with them. A notification sent but not declared would not type-check at its sender.
 */

describe('notifications in the method tables', () => {
  it('process/start declares its output, exit and close; the app-server its four', () => {
    expect([...notificationSchemasOf(METHOD_TABLE).keys()].sort()).toEqual([
      'process/closed',
      'process/exited',
      'process/output',
    ]);
    expect([...notificationSchemasOf(APP_SERVER_METHOD_TABLE).keys()].sort()).toEqual([
      'command/exec/outputDelta',
      'fs/changed',
      'process/exited',
      'process/outputDelta',
    ]);
  });

  it('types each notification from its schema', () => {
    expectTypeOf<keyof ExecServerNotification>().toEqualTypeOf<
      'process/output' | 'process/exited' | 'process/closed'
    >();
    expectTypeOf<ExecServerNotification['process/closed']>().toEqualTypeOf<{
      processId: string;
      seq: number;
    }>();
    expectTypeOf<ExecServerNotification['process/output']['capReached']>().toEqualTypeOf<
      boolean | undefined
    >();
    // The same name in the two tables keeps each table's own type.
    expectTypeOf<AppNotification['process/exited']['processHandle']>().toEqualTypeOf<string>();
    expectTypeOf<AppNotification['fs/changed']>().toEqualTypeOf<{
      watchId: string;
      changedPaths: string[];
    }>();
  });

  it('parses a notification as the wire carries it, and refuses a wrong one', () => {
    const closed = notificationSchemasOf(METHOD_TABLE).get('process/closed');
    expect(closed?.().parse({ processId: 'p', seq: 3 })).toEqual({ processId: 'p', seq: 3 });
    expect(closed?.().safeParse({ processId: 'p' }).success).toBe(false);
    const changed = notificationSchemasOf(APP_SERVER_METHOD_TABLE).get('fs/changed');
    expect(changed?.().safeParse({ watchId: 'w', changedPaths: ['/a'] }).success).toBe(true);
  });
});
