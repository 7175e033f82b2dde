// Prints vitest's JSON reports (the run of every project, then the helper's unit suites under Bun) as one plain
// closing line ("N passed, N failed, N skipped"), so a CI log reader that does not know vitest
// still sees how many tests ran.
import { existsSync, readFileSync } from 'node:fs';

const reports = process.argv.length > 2 ? process.argv.slice(2) : ['test-results.json'];
const total = { passed: 0, failed: 0, skipped: 0 };
for (const report of reports) {
  if (!existsSync(report)) {
    console.log(`tests: no report at ${report} (the run stopped before the test runner finished)`);
    continue;
  }
  const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = JSON.parse(
    readFileSync(report, 'utf8'),
  );
  total.passed += numPassedTests;
  total.failed += numFailedTests;
  total.skipped += numPendingTests + numTodoTests;
}
console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
