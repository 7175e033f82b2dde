export * from './command-network.js';
export * from './ip-address.js';
export * from './network-decision.js';
export * from './network-entry.js';
export * from './network-host.js';
