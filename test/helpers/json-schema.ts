// A small JSON Schema (2020-12 subset) validator, enough for the OpenAPI document's schemas:
// $ref, type, enum, const, required, properties, additionalProperties, items, allOf/anyOf/oneOf,
// numeric and length bounds (lengths in code points, as JSON Schema counts them), pattern,
// uniqueItems, minProperties and the date-time, uri and email formats. It returns every problem found.

export type JsonSchema = Record<string, unknown>;

export class SchemaValidator {
  private readonly root: Record<string, unknown>;

  /** `root` is the document that `$ref`s like "#/components/schemas/X" point into. */
  constructor(root: Record<string, unknown>) {
    this.root = root;
  }

  /** Every problem with `value` under `schema`, each as "where: what"; empty when it is valid. */
  validate(value: unknown, schema: JsonSchema, where = '$'): string[] {
    const problems: string[] = [];
    this.check(value, schema, where, problems);
    return problems;
  }

  private resolve(pointer: string): JsonSchema {
    if (!pointer.startsWith('#/')) throw new Error(`only local $refs are supported, got ${pointer}`);
    let node: unknown = this.root;
    for (const part of pointer.slice(2).split('/')) node = (node as Record<string, unknown>)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) throw new Error(`$ref ${pointer} points at nothing`);
    return node as JsonSchema;
  }

  private check(value: unknown, schema: JsonSchema, where: string, problems: string[]): void {
    if (typeof schema.$ref === 'string') this.check(value, this.resolve(schema.$ref), where, problems);
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
      if (!types.some((type) => hasType(value, type))) {
        problems.push(`${where}: expected ${types.join(' or ')}, got ${describe(value)}`);
        return;
      }
    }
    if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => deepEqual(allowed, value))) {
      problems.push(`${where}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
    }
    if ('const' in schema && !deepEqual(schema.const, value)) problems.push(`${where}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`);
    if (Array.isArray(schema.allOf)) for (const part of schema.allOf as JsonSchema[]) this.check(value, part, where, problems);
    if (Array.isArray(schema.anyOf) && !(schema.anyOf as JsonSchema[]).some((part) => this.validate(value, part, where).length === 0)) {
      problems.push(`${where}: matches none of anyOf`);
    }
    if (Array.isArray(schema.oneOf) && (schema.oneOf as JsonSchema[]).filter((part) => this.validate(value, part, where).length === 0).length !== 1) {
      problems.push(`${where}: does not match exactly one of oneOf`);
    }
    if (typeof value === 'number') checkNumber(value, schema, where, problems);
    if (typeof value === 'string') checkString(value, schema, where, problems);
    if (Array.isArray(value)) this.checkArray(value, schema, where, problems);
    else if (isObject(value)) this.checkObject(value, schema, where, problems);
  }

  private checkArray(value: unknown[], schema: JsonSchema, where: string, problems: string[]): void {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) problems.push(`${where}: fewer than ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) problems.push(`${where}: more than ${schema.maxItems} items`);
    if (schema.uniqueItems === true && new Set(value.map((item) => JSON.stringify(item))).size !== value.length) problems.push(`${where}: items are not unique`);
    if (isObject(schema.items)) value.forEach((item, index) => this.check(item, schema.items as JsonSchema, `${where}[${index}]`, problems));
  }

  private checkObject(value: Record<string, unknown>, schema: JsonSchema, where: string, problems: string[]): void {
    for (const field of (schema.required as string[] | undefined) ?? []) {
      if (!Object.hasOwn(value, field)) problems.push(`${where}: required field "${field}" is missing`);
    }
    if (typeof schema.minProperties === 'number' && Object.keys(value).length < schema.minProperties) problems.push(`${where}: fewer than ${schema.minProperties} fields`);
    const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
    for (const [field, fieldValue] of Object.entries(value)) {
      if (Object.hasOwn(properties, field)) this.check(fieldValue, properties[field]!, `${where}.${field}`, problems);
      else if (schema.additionalProperties === false) problems.push(`${where}: field "${field}" is not allowed`);
      else if (isObject(schema.additionalProperties)) this.check(fieldValue, schema.additionalProperties as JsonSchema, `${where}.${field}`, problems);
    }
  }
}

function checkNumber(value: number, schema: JsonSchema, where: string, problems: string[]): void {
  if (typeof schema.minimum === 'number' && value < schema.minimum) problems.push(`${where}: ${value} is below ${schema.minimum}`);
  if (typeof schema.maximum === 'number' && value > schema.maximum) problems.push(`${where}: ${value} is above ${schema.maximum}`);
  if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) problems.push(`${where}: ${value} is not above ${schema.exclusiveMinimum}`);
  if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) problems.push(`${where}: ${value} is not below ${schema.exclusiveMaximum}`);
  if (typeof schema.multipleOf === 'number') {
    const quotient = value / schema.multipleOf;
    if (Math.abs(quotient - Math.round(quotient)) > 1e-6) problems.push(`${where}: ${value} is not a multiple of ${schema.multipleOf}`);
  }
}

function checkString(value: string, schema: JsonSchema, where: string, problems: string[]): void {
  const length = [...value].length;
  if (typeof schema.minLength === 'number' && length < schema.minLength) problems.push(`${where}: shorter than ${schema.minLength}`);
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) problems.push(`${where}: longer than ${schema.maxLength}`);
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) problems.push(`${where}: does not match ${schema.pattern}`);
  if (schema.format === 'date-time' && !(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) && !Number.isNaN(Date.parse(value)))) {
    problems.push(`${where}: "${value}" is not an RFC 3339 date-time`);
  }
  if (schema.format === 'uri' && !isAbsoluteUri(value)) problems.push(`${where}: "${value}" is not an absolute URI`);
  if (schema.format === 'email' && !/^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(value)) problems.push(`${where}: "${value}" is not an email address`);
}

function isAbsoluteUri(text: string): boolean {
  try {
    return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(text) && new URL(text).protocol !== '';
  } catch {
    return false;
  }
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return typeof value === type;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function deepEqual(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}
