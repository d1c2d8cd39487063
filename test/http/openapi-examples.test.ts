// #49.9: the OpenAPI document explains every operation: a summary and a description, an example
// of what to send (the body, and each path parameter) and of what comes back (each success
// answer with a body), and every example is valid against the schema it illustrates.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openapiDocument } from '../../src/cli/openapi.ts';
import { examplesOf, type Operation, parameterExample } from '../helpers/openapi-operations.ts';

describe('the OpenAPI document: descriptions and examples', async () => {
  const doc = (await openapiDocument({})) as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, object> };
  };
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${path}`,
      operation,
    })),
  );
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const valid = (schema: object | undefined, value: unknown) => {
    // Local references point into the document's components.
    const own = JSON.parse(JSON.stringify(schema ?? {}).replaceAll('"#/components/', '"doc#/components/'));
    const check = ajv.compile(own);
    return check(value) ? '' : ajv.errorsText(check.errors);
  };

  it('gives every operation a summary and a description', () => {
    const missing = operations
      .filter(({ operation }) => !operation.summary?.trim() || !operation.description?.trim())
      .map(({ name }) => name);
    assert.deepEqual(missing, []);
  });

  it('gives every request body and path parameter an example that fits its schema', () => {
    const problems: string[] = [];
    for (const { name, operation } of operations) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        const examples = examplesOf(media);
        if (examples.length === 0) problems.push(`${name} ${type}: no request example`);
        for (const example of examples) {
          const error = valid(media.schema, example);
          if (error) problems.push(`${name} ${type}: request example: ${error}`);
        }
      }
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path') continue;
        const example = parameterExample(parameter);
        if (example === undefined) problems.push(`${name}: path parameter ${parameter.name} has no example`);
        else {
          const error = valid(parameter.schema, example);
          if (error) problems.push(`${name}: path parameter ${parameter.name}: ${error}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('gives every success answer with a body an example that fits its schema', () => {
    const problems: string[] = [];
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!status.startsWith('2')) continue;
        for (const [type, media] of Object.entries(response.content ?? {})) {
          const examples = examplesOf(media);
          if (examples.length === 0) problems.push(`${name} ${status} ${type}: no answer example`);
          for (const example of examples) {
            const error = valid(media.schema, example);
            if (error) problems.push(`${name} ${status} ${type}: answer example: ${error}`);
          }
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('describes POST /notifications', () => {
    const send = doc.paths['/notifications']?.post;
    assert.match(send?.description ?? '', /Idempotency-Key/);
  });
});
