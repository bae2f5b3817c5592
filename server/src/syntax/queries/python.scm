; Python definitions (see rust.scm for the capture names). Module-level names in
; capitals are constants.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(module
  (expression_statement
    (assignment left: (identifier) @name)) @definition.constant
  (#match? @name "^[A-Z_][A-Z0-9_]*$"))
