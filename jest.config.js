/**
 * The construct's tests (test/) and the local twin's (packages/webhook-inbox-local/test), one jest
 * project each: `jest` runs both, `jest --selectProjects twin` the twin's alone. They run against
 * emulators that `test/support/global-setup.mjs` starts once per run.
 */
const { PROJECTS, RUN_SETTINGS } = require('./test/support/jest-project.cjs');

module.exports = { projects: [PROJECTS.construct, PROJECTS.twin], ...RUN_SETTINGS };
