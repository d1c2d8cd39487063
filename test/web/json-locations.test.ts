// #52: the workflow editor places the API's field errors (`steps/2/for`) at their line of the
// text as typed (web/src/json-locations.ts); a missing field points at its enclosing value.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineOfPath, locateJson } from '../../web/src/json-locations.ts';

const TEXT = `{
  "name": "Welcome",
  "steps": [
    { "type": "send", "channel": "email", "template": "hi" },
    {
      "type": "delay",
      "for": "P1Y"
    },
    { "type": "digest",
      "a/b": { "x": [1, 2.5e3, true, null, "q\\"\\n"] } }
  ]
}`;

describe('json locations', () => {
  it('finds the line of each path, and of the nearest value a missing one lies in', () => {
    const at = locateJson(TEXT);
    assert.equal(at.syntaxError, null);
    const line = (path: string) => lineOfPath(TEXT, at, path);
    assert.equal(line('name'), 2);
    assert.equal(line('steps/0/template'), 4);
    assert.equal(line('steps/1'), 5);
    assert.equal(line('steps/1/for'), 7);
    assert.equal(line('steps/1/limit'), 5, 'a missing field: its step');
    assert.equal(line('steps/2/a~1b/x/4'), 10, 'JSON Pointer escapes, every scalar kind');
    assert.equal(line('steps/7/for'), 3, 'a missing step: the list');
    assert.equal(line(''), 1);
  });

  it('says where a text stops being JSON', () => {
    const broken = '{\n  "steps": [\n    { "type": "delay", }\n  ]\n}';
    const at = locateJson(broken);
    assert.equal(lineOfPath(broken, at, 'steps/0/type'), 3, 'what parsed is still placed');
    assert.equal(broken.slice(0, at.syntaxError ?? 0).split('\n').length, 3);
    assert.equal(locateJson('{"a": 1} x').syntaxError, 9);
    assert.equal(locateJson('"unterminated').syntaxError, 13, 'at its end');
    assert.equal(locateJson('').syntaxError, 0);
  });
});
