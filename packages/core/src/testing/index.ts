export { makeNewMessage, scopeA } from './conformance-fixtures.js';
export { InMemoryStore } from './in-memory-store.js';
export { runStoreConformance } from './run-store-conformance.js';
export type { StoreConformanceOptions } from './run-store-conformance.js';
