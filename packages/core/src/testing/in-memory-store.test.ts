import { runStoreConformance } from './run-store-conformance.js';
import { InMemoryStore } from './in-memory-store.js';

runStoreConformance({ name: 'InMemoryStore', createStore: () => new InMemoryStore() });
