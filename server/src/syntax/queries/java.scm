; Java definitions (see rust.scm for the capture names). `static final` fields are
; constants.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
((field_declaration
  (modifiers) @modifiers
  declarator: (variable_declarator name: (identifier) @name)) @definition.constant
  (#match? @modifiers "static")
  (#match? @modifiers "final"))
