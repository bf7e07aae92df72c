/**
 * Standard Schema v1 (https://standardschema.dev), written out here so sluice needs no package
 * for it: zod ≥ 3.24 (and `zod/v3`), zod 4, valibot ≥ 1 and arktype ≥ 2 all implement it. Also
 * the optional JSON Schema converter of Standard JSON Schema v1 (`~standard.jsonSchema`), which
 * zod ≥ 4.2 and arktype provide.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}

// eslint-disable-next-line @typescript-eslint/no-namespace -- the standard's own shape: the interface and its helper types share one name.
export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>;
    readonly types?: Types<Input, Output> | undefined;
  }
  type Result<Output> = SuccessResult<Output> | FailureResult;
  interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }
  interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }
  interface PathSegment {
    readonly key: PropertyKey;
  }
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }
  type InferInput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['input'];
  type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];
}

/** The optional converter (Standard JSON Schema v1) some validators carry beside `validate`. */
export interface StandardJsonSchemaConverter {
  readonly input: (options: { readonly target: string; readonly libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;
}

/** Does `value` look like a Standard Schema v1 validator? (Functions too: arktype types are callable.) */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return (
    typeof props === 'object' &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === 'function'
  );
}

/** The validator's own JSON Schema converter, when it has one. */
export function jsonSchemaConverterOf(schema: StandardSchemaV1): StandardJsonSchemaConverter | undefined {
  const conv = (schema['~standard'] as { jsonSchema?: unknown }).jsonSchema;
  if (typeof conv === 'object' && conv !== null && typeof (conv as { input?: unknown }).input === 'function') {
    return conv as StandardJsonSchemaConverter;
  }
  return undefined;
}
