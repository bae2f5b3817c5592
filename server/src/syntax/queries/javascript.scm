; JavaScript definitions (see rust.scm for the capture names). Functions and classes
; bound to a variable count outside function bodies; so do constants in capitals.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (identifier) @name) @definition.class
(method_definition name: (_) @name) @definition.method
(field_definition
  property: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.method
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function.toplevel
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function.toplevel
(lexical_declaration
  (variable_declarator name: (identifier) @name value: (class))) @definition.class.toplevel
((lexical_declaration
  (variable_declarator name: (identifier) @name)) @definition.constant.toplevel
  (#match? @name "^[A-Z_][A-Z0-9_]*$"))
