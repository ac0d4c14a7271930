const { format } = require("marked"); console.log(typeof format)
