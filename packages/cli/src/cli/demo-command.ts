import { currentHostOs, isFsError } from '@fs-sandbox/policy';
import type { Command } from 'commander';
import { addBrokerOptions, type BrokerFlags, brokerOptionsFrom } from './broker-options.js';
import { type CliDeps, EXIT } from './cli-io.js';
import {
  createDemoWorkspace,
  DEMO_SECRET_VARIABLE,
  type DemoStep,
  type DemoWorkspace,
  demoSteps,
  removeDemoWorkspace,
} from './demo-story.js';
import { formatTable } from './table.js';
import { escapeForTerminal } from './terminal-text.js';

/**
 * `fs-sandbox demo`: a temporary workspace and a short story of allowed and denied operations,
 * each checked against the disk. Exit 1 if any step did not behave as expected. With
 * --no-precheck the denials come from the kernel sandbox alone.
 */
export function registerDemoCommand(program: Command, deps: CliDeps): void {
  addBrokerOptions(program.command('demo'))
    .description('run a short sandboxed story in a temporary workspace and check each outcome')
    .action(async (flags: BrokerFlags) => {
      const demo = await createDemoWorkspace();
      const env = { ...deps.io.env, [DEMO_SECRET_VARIABLE]: demo.envSecret };
      const broker = deps.createBroker({ ...brokerOptionsFrom(flags, deps.io), env });
      try {
        deps.io.stdout.write(`fs-sandbox demo: workspace ${escapeForTerminal(demo.workspace)}\n\n`);
        const rows: string[][] = [];
        let failures = 0;
        for (const step of demoSteps(currentHostOs())) {
          const row = await runStep(step, broker, demo);
          if (!row.asExpected) failures += 1;
          rows.push([step.title, step.expect, row.outcome, row.asExpected ? 'yes' : 'NO', `${row.ms}`]);
        }
        deps.io.stdout.write(
          `${formatTable(['step', 'expected', 'outcome', 'as expected', 'ms'], rows)}\n\n`,
        );
        deps.io.stdout.write(
          failures === 0
            ? 'every step behaved as expected\n'
            : `${failures} step(s) did NOT behave as expected\n`,
        );
        if (failures > 0) deps.setExitCode(EXIT.failed);
      } finally {
        await broker.close();
        await removeDemoWorkspace(demo);
      }
    });
}

async function runStep(
  step: DemoStep,
  broker: Parameters<DemoStep['run']>[0],
  demo: DemoWorkspace,
): Promise<{ outcome: string; asExpected: boolean; ms: number }> {
  const started = performance.now();
  let output: unknown;
  let allowed: boolean;
  try {
    output = await step.run(broker, demo);
    allowed = true;
  } catch (error) {
    output = error;
    allowed = false;
  }
  const ms = Math.round(performance.now() - started);
  const verified = await step.verify(demo, output);
  const denial = `denied (${isFsError(output) ? output.kind : 'error'})`;
  const outcome = step.expect === 'hidden' ? (verified ? 'hidden' : 'LEAKED') : allowed ? 'allowed' : denial;
  const outcomeAsExpected = step.expect === 'hidden' || (allowed ? 'allowed' : 'denied') === step.expect;
  return { outcome, asExpected: verified && outcomeAsExpected, ms };
}
