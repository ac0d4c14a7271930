import { DatabaseSync } from 'node:sqlite';
const db = new DatabaseSync(':memory:', { allowExtension: true });
db.loadExtension('./scripts/fmt.so');
