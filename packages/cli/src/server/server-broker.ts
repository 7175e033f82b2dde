import type { FsBroker } from '@fs-sandbox/broker/internal';
/**
 * What the server needs of the broker: the Broker interface plus the two helper-only operations
 * behind read handles (`fs/openForRead`, `fs/readRange`). Nothing else, so tests can pass a fake.
 */
export type ServerBroker = Pick<
  FsBroker,
  'call' | 'callWithInfo' | 'explainAccess' | 'close' | 'prepareCommand'
>;
