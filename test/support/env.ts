process.env.NODE_ENV = 'test';
process.env.TALLY_LOG_LEVEL ??= 'silent';
