/** The twin's tests: `npm test` here, or `jest --selectProjects twin` at the repository's root. */
const { PROJECTS, RUN_SETTINGS } = require('../../test/support/jest-project.cjs');

module.exports = { ...PROJECTS.twin, ...RUN_SETTINGS };
