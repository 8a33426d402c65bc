#!/usr/bin/env node
// The launcher under its earlier name: runs context-assembler.cjs (prefer that one: a CommonJS
// entry starts about 8 ms faster than an ES module).
import { createRequire } from 'node:module';

createRequire(import.meta.url)('./context-assembler.cjs');
