/**
 * The exit status of a Landlock launch that could not be set up, before the program ran (125, as
 * `env` and `timeout` use for their own failures): the broker tells it from the program's own.
 */
export const LANDLOCK_SETUP_FAILED = 125;
