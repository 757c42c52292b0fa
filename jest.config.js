/**
 * Every test, one jest project per layer (test/support/jest-project.cjs): `jest` runs them all,
 * `jest --selectProjects unit` (`npm run test:unit`) the pure tests alone, and likewise
 * `integration`, `twin` and `docs-package`.
 */
const { LAYERS, PROJECTS, RUN_SETTINGS } = require('./test/support/jest-project.cjs');

module.exports = { projects: LAYERS.map((layer) => PROJECTS[layer.name]), ...RUN_SETTINGS };
