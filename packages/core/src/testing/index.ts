export { makeNewMessage, runStoreConformance } from './run-store-conformance.js';
export type { StoreConformanceOptions } from './run-store-conformance.js';
