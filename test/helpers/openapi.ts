import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** The Zulip API document this server follows (feature level 420), as published; the tests read it as is. */
export const OPENAPI_PATH = new URL('../../docs/zulip-openapi.yaml', import.meta.url);

export type Schema = {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  enum?: unknown[];
};

/** The document's vendor-named fields under this server's neutral names (shared/spec/interface.md). */
export const NEUTRAL_NAMES: Readonly<Record<string, string>> = {
  zulip_feature_level: 'svc_feature_level',
  zulip_version: 'svc_version',
  zulip_merge_base: 'svc_merge_base',
  giphy_api_key: 'gif_api_key',
  has_zoom_token: 'has_video_token',
};

export class OpenApi {
  readonly doc: { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, Schema> } };

  constructor() {
    this.doc = parse(readFileSync(OPENAPI_PATH, 'utf8'), { maxAliasCount: -1 });
  }

  resolve(schema: Schema): Schema {
    let current = schema;
    while (current.$ref) current = current.$ref.slice(2).split('/').reduce((node: any, key) => node[key], this.doc) as Schema;
    return current;
  }

  /** The properties of an object schema, through its `allOf` parts. */
  properties(schema: Schema): Record<string, Schema> {
    const resolved = this.resolve(schema);
    const merged: Record<string, Schema> = { ...resolved.properties };
    for (const part of resolved.allOf ?? []) Object.assign(merged, this.properties(part));
    return merged;
  }

  /**
   * The places where `value` does not have the schema's shape: JSON type, nullability, required
   * properties of objects, property and item types. Formats, bounds and enums are not checked.
   */
  mismatches(value: unknown, schema: Schema, path: string): string[] {
    const resolved = this.resolve(schema);
    if (value === null) return resolved.nullable || resolved.type === undefined ? [] : [`${path}: null`];
    const alternatives = resolved.oneOf ?? resolved.anyOf;
    if (alternatives) {
      const each = alternatives.map((alternative) => this.mismatches(value, alternative, path));
      return each.some((found) => found.length === 0) ? [] : [`${path}: matches none of ${alternatives.length} alternatives (${each.flat()[0]})`];
    }
    if (resolved.allOf) {
      const parts = resolved.allOf.flatMap((part) => this.mismatches(value, part, path));
      return resolved.properties ? [...parts, ...this.objectMismatches(value, resolved, path)] : parts;
    }
    const type = resolved.type ?? (resolved.properties ? 'object' : undefined);
    switch (type) {
      case undefined:
        return [];
      case 'integer':
        return Number.isInteger(value) ? [] : [`${path}: ${JSON.stringify(value)} is not an integer`];
      case 'number':
      case 'string':
      case 'boolean':
        return typeof value === type ? [] : [`${path}: ${JSON.stringify(value)} is not a ${type}`];
      case 'array':
        if (!Array.isArray(value)) return [`${path}: not an array`];
        return resolved.items ? value.flatMap((item, index) => this.mismatches(item, resolved.items!, `${path}[${index}]`)) : [];
      case 'object':
        return this.objectMismatches(value, resolved, path);
      default:
        return [`${path}: unknown schema type ${type}`];
    }
  }

  private objectMismatches(value: unknown, schema: Schema, path: string): string[] {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: not an object`];
    const record = value as Record<string, unknown>;
    const problems = (schema.required ?? []).filter((name) => !(name in record)).map((name) => `${path}.${name}: missing`);
    for (const [name, item] of Object.entries(record)) {
      const property = schema.properties?.[name];
      if (property) problems.push(...this.mismatches(item, property, `${path}.${name}`));
      else if (typeof schema.additionalProperties === 'object') problems.push(...this.mismatches(item, schema.additionalProperties, `${path}.${name}`));
    }
    return problems;
  }
}
