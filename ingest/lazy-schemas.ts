// Fastify compiles every route's JSON schemas when the server starts: Ajv for the validators,
// fast-json-stringify for the serializers, ~0.1-0.2 s of CPU for this app's ~40 routes at every `timeseal serve`
// start (and for every app a test builds in its own process), while a node often answers a handful of them
// before it is restarted. These factories wrap Fastify's own two (the same Ajv options, shared schemas and
// pools) so that each route's functions are compiled at its first request instead: what is checked, and the
// errors, are the same (ingest/test/lazy-schemas.test.ts compares the answers with Fastify's eager compilers).
import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

/** What Fastify hands a compiler: one route's schema for one part (validators) or one status (serializers). */
export interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
  httpStatus?: string;
}
/** A compiled validator: Ajv's function, which leaves its errors on itself. */
type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type Serialize = (data: unknown) => string;
/** A compiler factory as Fastify calls it: (shared schemas, options) => the compiler of one route's function. */
type Factory<F> = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => F;

export interface Compilers {
  buildValidator: Factory<Validate>;
  buildSerializer: Factory<Serialize>;
}

// Fastify's own compilers, the packages Fastify itself would use (its dependencies, not ours).
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));
const AjvCompiler = fastifyRequire('@fastify/ajv-compiler') as () => Factory<Validate>;
const SerializerSelector = fastifyRequire('@fastify/fast-json-stringify-compiler') as () => Factory<Serialize>;

/** Fastify's own two compiler factories, new (each keeps its own pool of Ajv instances). */
export function fastifyCompilers(): Compilers {
  return { buildValidator: AjvCompiler(), buildSerializer: SerializerSelector() };
}

function lazyValidators(factory: Factory<Validate>): Factory<Validate> {
  return (externalSchemas, options) => {
    const compile = factory(externalSchemas, options);
    return (route) => {
      let compiled: Validate | undefined;
      const validate: Validate = (data) => {
        compiled ??= compile(route);
        const result = compiled(data);
        validate.errors = compiled.errors;
        return result;
      };
      return validate;
    };
  };
}

function lazySerializers(factory: Factory<Serialize>): Factory<Serialize> {
  return (externalSchemas, options) => {
    const compile = factory(externalSchemas, options);
    return (route) => {
      let compiled: Serialize | undefined;
      return (data) => (compiled ??= compile(route))(data);
    };
  };
}

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;

/** The `schemaController` server option: the compilers (Fastify's own by default), each route's functions
 * compiled at its first request. */
export function lazySchemaController(compilers = fastifyCompilers()): SchemaController {
  const compilersFactory = {
    buildValidator: lazyValidators(compilers.buildValidator),
    buildSerializer: lazySerializers(compilers.buildSerializer),
  };
  return { compilersFactory: compilersFactory as unknown as SchemaController['compilersFactory'] };
}
