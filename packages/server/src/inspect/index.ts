export {
  defaultPricePerMillion,
  maxSavingsEntries,
  mountInspectorRoutes,
  transcriptPageSize,
} from './mount-inspector-routes.js';
export { inspectorRoutes } from './inspector-links.js';
