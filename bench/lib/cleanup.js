'use strict';
/*
 * Everything a bench starts (servers, databases, temporary directories) registers how to undo it here; the
 * undo steps run newest first at the end, on failure, and on Ctrl-C / SIGTERM.
 */

const steps = [];

/** Registers `undo`; answers a function that runs it now (once) and forgets it. */
function onCleanup(undo) {
  let done = false;
  const step = async () => {
    if (done) return;
    done = true;
    await undo();
  };
  steps.push(step);
  return async () => {
    const index = steps.indexOf(step);
    if (index !== -1) steps.splice(index, 1);
    await step();
  };
}

async function cleanUp() {
  while (steps.length) {
    try {
      await steps.pop()();
    } catch (error) {
      console.error(`cleanup: ${error.message}`);
    }
  }
}

/** Runs `main`, then cleans up; a failure or a signal cleans up too and sets a failing exit status. */
function runMain(main) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping what the bench started`);
      cleanUp().finally(() => process.exit(130));
    });
  }
  main()
    .then(cleanUp)
    .catch(async (error) => {
      console.error(error);
      await cleanUp();
      process.exit(1);
    });
}

module.exports = { onCleanup, cleanUp, runMain };
