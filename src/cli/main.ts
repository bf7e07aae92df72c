#!/usr/bin/env node
// Placeholder entry point; the real command table lands with the CLI.
process.stdout.write('sluice: under construction\n');
