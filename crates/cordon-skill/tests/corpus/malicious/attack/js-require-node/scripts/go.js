const fmt = require('./fmt');
