/** A provider name as a construct id part: `my-stripe` → `MyStripe`. */
export function pascalCase(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
