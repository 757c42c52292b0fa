/** The twin's tests, all of them: `npm test` here; at the repository's root they are in the `unit` and `twin` projects. */
const { TWIN_PACKAGE, RUN_SETTINGS } = require('../../test/support/jest-project.cjs');

module.exports = { ...TWIN_PACKAGE, ...RUN_SETTINGS };
