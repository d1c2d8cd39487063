// The one home of locale tags and their fallback chain (src/templates/locale.ts, docs/localization.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalLocale, closestLocale, fallbackChain } from '../../src/templates/locale.ts';

describe('locale tags', () => {
  it('are canonicalised, and a tag that is not BCP 47 has no canonical form', () => {
    assert.equal(canonicalLocale('fr-ca'), 'fr-CA');
    assert.equal(canonicalLocale('ZH-hant-tw'), 'zh-Hant-TW');
    assert.equal(canonicalLocale('en'), 'en');
    for (const bad of ['', 'not a tag', 'en_US', 'en-US-US', 'toolongtag', 'fr-']) {
      assert.equal(canonicalLocale(bad), undefined, bad);
    }
  });
});

describe('the fallback chain', () => {
  it('drops one subtag at a time, and a singleton with the subtag after it', () => {
    assert.deepEqual(fallbackChain('fr-CA'), ['fr-CA', 'fr']);
    assert.deepEqual(fallbackChain('zh-Hant-TW'), ['zh-Hant-TW', 'zh-Hant', 'zh']);
    assert.deepEqual(fallbackChain('de-DE-u-co-phonebk'), [
      'de-DE-u-co-phonebk',
      'de-DE-u-co',
      'de-DE',
      'de',
    ]);
    assert.deepEqual(fallbackChain('en'), ['en']);
  });

  it("picks the closest variant: the notification's locale first, else its recipient's", () => {
    const fr = new Set(['fr', 'de-AT']);
    assert.equal(closestLocale({ locale: 'fr-CA' }, fr), 'fr');
    assert.equal(closestLocale({ locale: 'fr-CA' }, new Set(['fr', 'fr-CA'])), 'fr-CA');
    assert.equal(closestLocale({ locale: 'de' }, fr), undefined, 'a more specific variant is not closer');
    assert.equal(closestLocale({ locale: null, recipientLocale: 'fr-BE' }, fr), 'fr');
    assert.equal(
      closestLocale({ locale: 'es', recipientLocale: 'fr' }, fr),
      undefined,
      'its own locale wins',
    );
    assert.equal(closestLocale({ locale: null }, fr), undefined);
    assert.equal(closestLocale({ locale: 'fr' }, new Set()), undefined);
  });
});
