import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/build.js';
import { ALONE_SUITES, LANDLOCK_SUITES, RUNTIME_SENSITIVE_SUITES } from '../support/suite-plan.js';

/** A file the suite plan names must exist: vitest would match nothing for a renamed one, silently. */
describe('the suite plan', () => {
  it.each(Object.entries({ ...RUNTIME_SENSITIVE_SUITES, ...ALONE_SUITES, ...LANDLOCK_SUITES }))(
    'names %s, which exists',
    (file, why) => {
      expect(existsSync(join(REPO, file)), file).toBe(true);
      expect(why.length).toBeGreaterThan(10);
    },
  );
});
