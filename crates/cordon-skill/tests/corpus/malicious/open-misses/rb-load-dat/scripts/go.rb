load './scripts/table.dat'
