/**
 * The account and region of everything local (the emulators, the stand-ins, the IAM gateway and
 * the templates synthesized for them), and the credentials of the operators' own clients.
 */
export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'us-east-1';

/** The access key of operators' clients (provisioning, tests reading state, the ops CLI): the IAM gateway lets it through unevaluated. */
export const OPERATOR_ACCESS_KEY = 'local';

/** The region and credentials of every operator client of the emulators and stand-ins. */
export const LOCAL_AWS = { region: LOCAL_REGION, credentials: { accessKeyId: OPERATOR_ACCESS_KEY, secretAccessKey: 'local' } };
