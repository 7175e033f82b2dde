/** Something holding helper processes that must die with the broker's process. */
export interface ProcessOwner {
  /** Kills every helper now, synchronously (only synchronous work runs in an exit handler). */
  killAll(): void;
}

const owners = new Set<ProcessOwner>();
let installed = false;

/**
 * Kills the owner's helpers when the broker's process exits, even if nobody called close(). A
 * SIGKILLed broker runs no handler at all: there bwrap's --die-with-parent takes the sandbox down.
 * One process-wide listener serves every pool, so many brokers add no listener warnings.
 */
export function killOnExit(owner: ProcessOwner): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const each of owners) each.killAll();
    });
  }
  owners.add(owner);
  return () => owners.delete(owner);
}
