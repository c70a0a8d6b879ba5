// Checks an answer the server gave against the OpenAPI document: the operation is found from
// the method and path, the status must be documented (an error status may instead fall back
// to the shared Error schema), and the JSON body must validate against its schema, `required`
// fields included. The test server helper runs it on every JSON answer the suite receives.

import { SchemaValidator, type JsonSchema } from './json-schema.ts';

interface CompiledPath {
  regex: RegExp;
  item: Record<string, { responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }> }>;
  static: boolean;
}

export class AnswerChecker {
  private readonly validator: SchemaValidator;
  private readonly paths: CompiledPath[];

  constructor(document: Record<string, unknown>) {
    this.validator = new SchemaValidator(document);
    this.paths = Object.entries(document.paths as Record<string, CompiledPath['item']>)
      .map(([path, item]) => ({
        regex: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
        item,
        static: !path.includes('{'),
      }))
      // A parameter-free path wins over a pattern (/v1/users/me before /v1/users/{id}), as in the router.
      .sort((left, right) => Number(right.static) - Number(left.static));
  }

  /** Every way this answer departs from the document; empty when it conforms. */
  problems(method: string, url: string, status: number, body: unknown): string[] {
    const path = url.split('?')[0]!;
    const where = `${method} ${path} → ${status}`;
    const operation = this.paths.find((candidate) => candidate.regex.test(path))?.item[method.toLowerCase()];
    const documented = operation?.responses?.[String(status)] ?? operation?.responses?.[`${String(status)[0]}XX`];
    if (documented === undefined) {
      // An undocumented status is only acceptable as an error, and an error is always an Error.
      if (status < 400) return operation ? [`${where}: status ${status} is not documented`] : [];
      return this.validator.validate(body, { $ref: '#/components/schemas/Error' }).map((problem) => `${where}: ${problem}`);
    }
    const schema = documented.content?.['application/json']?.schema;
    if (schema === undefined) return body === null ? [] : [`${where}: the document declares no JSON body for this answer`];
    return this.validator.validate(body, schema).map((problem) => `${where}: ${problem}`);
  }
}
