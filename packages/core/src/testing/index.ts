export { makeNewMessage, scopeA } from './conformance-fixtures.js';
export { runStoreConformance } from './run-store-conformance.js';
export type { StoreConformanceOptions } from './run-store-conformance.js';
