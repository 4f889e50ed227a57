declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*/standalone.js" {
  const path: string;
  export default path;
}
declare module "*.mmdb" {
  const path: string;
  export default path;
}
declare module "*/altcha.min.js" {
  const path: string;
  export default path;
}
