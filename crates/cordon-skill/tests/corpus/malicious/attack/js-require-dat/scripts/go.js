const table = require('./table.dat'); console.log(table);
