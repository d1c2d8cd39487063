// Liquid's time cut-off is wall-clock time; a render thread kept off the CPU (busy cores, or a bulk
// render thread at its lower priority) reaches it having rendered little. Given its thread's CPU
// clock, renderParsed goes on until the render has had its CPU time, and only then cuts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseContent, RenderLimitError, renderParsed } from '../../src/templates/liquid.ts';

const parsed = parseContent({ subject: 'Hi {{ name }}', text: '{% for i in (1..200) %}{{ i }}{% endfor %}' });
const variables = { name: 'Ada' };
/** A cut-off already passed when the render starts: the thread got the job after a long wait off the CPU. */
const passed = () => performance.now() - 1;

describe('the time cut-off of a render', () => {
  it('renders a job whose wall-clock cut-off passed while its thread had none of its CPU time', () => {
    const content = renderParsed(parsed, variables, passed(), { ms: 75, clock: () => 0 });
    assert.equal(content.subject, 'Hi Ada');
    assert.match(content.text ?? '', /^12345.*200$/);
  });

  it('cuts a render that has had its CPU time', () => {
    let cpu = 0;
    const clock = () => {
      cpu += 50; // each look finds the thread 50 ms of CPU further on
      return cpu;
    };
    assert.throws(
      () => renderParsed(parsed, variables, passed(), { ms: 75, clock }),
      (error) => error instanceof RenderLimitError && /rendering ran out of time/.test(error.message),
    );
  });

  it('cuts at the wall-clock cut-off where the thread has no CPU clock', () => {
    for (const cpu of [undefined, { ms: 75, clock: () => undefined }]) {
      assert.throws(
        () => renderParsed(parsed, variables, passed(), cpu),
        (error) => error instanceof RenderLimitError && /ran out of time/.test(error.message),
      );
    }
  });
});
