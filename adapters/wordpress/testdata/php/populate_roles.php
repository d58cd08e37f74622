<?php
$ROLES = array();
class StubRole { public $name; function __construct($n){$this->name=$n;} 
  function add_cap($cap, $grant = true){ global $ROLES; if (!isset($ROLES[$this->name])) return; $ROLES[$this->name]['capabilities'][$cap] = $grant; }
  function remove_cap($cap){ global $ROLES; unset($ROLES[$this->name]['capabilities'][$cap]); } }
function add_role($role, $name, $caps = array()) { global $ROLES; if (empty($role) || isset($ROLES[$role])) return; $ROLES[$role] = array('name'=>$name, 'capabilities'=>$caps); return new StubRole($role); }
function get_role($role) { global $ROLES; return isset($ROLES[$role]) ? new StubRole($role) : null; }
// Newer populate_roles() (7.1's) turns wp_roles()'s database writes off
// while it runs, and saves the roles once at the end when they were on.
class StubRoles { public $use_db = false; public $role_key = 'wp_user_roles'; public $roles = array(); }
function wp_roles() { static $r = null; if ($r === null) $r = new StubRoles(); return $r; }
// The populate_roles*() functions of wp-admin/includes/schema.php, extracted
// by the test and passed as the first argument.
require $argv[1];
populate_roles();
echo serialize($ROLES);
