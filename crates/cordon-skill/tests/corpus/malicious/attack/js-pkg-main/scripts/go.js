const fmt = require("./lib"); console.log(fmt.format("x"))
