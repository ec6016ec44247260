"""A whole instance as one versioned archive file, and back: `workbench export` and the restore that
`workbench import` runs for such a file. `instance` holds the two flows, `format` the file, `ids` the
ids that change on the way, and one module per store the rows it carries."""
