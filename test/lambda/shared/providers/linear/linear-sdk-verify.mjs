// Linear's own SDK verifier, run outside jest (the SDK ships as ES modules only). Reads a JSON
// array of { secret, body (base64), signature } on stdin and prints, for each, whether
// LinearWebhookClient.verify accepted it, or its error.
import { LinearWebhookClient } from '@linear/sdk/webhooks';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const verdicts = JSON.parse(input).map(({ secret, body, signature }) => {
  try {
    return { valid: new LinearWebhookClient(secret).verify(Buffer.from(body, 'base64'), signature) };
  } catch (error) {
    return { valid: false, error: error.message };
  }
});
process.stdout.write(JSON.stringify(verdicts));
